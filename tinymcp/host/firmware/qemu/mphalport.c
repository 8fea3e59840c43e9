// The emulated board's HAL, in place of the qemu port's: the UART is read into a ring buffer
// whenever the VM passes its hook, so Ctrl-C interrupts a running program as on a real board,
// and waiting for input sleeps (WFI) until a byte or the next SysTick instead of spinning.
#include "py/mphal.h"
#include "py/runtime.h"
#include "py/stream.h"
#include "shared/runtime/interrupt_char.h"
#include "uart.h"

uintptr_t ticks_ms(void);
uintptr_t ticks_us(void);

// The CMSDK APB UART0 and its RX interrupt (IRQ 0 on QEMU's mps2-an385). The interrupt is only
// ever enabled with PRIMASK set, inside board_wait(): it wakes the core, it is never taken (the
// port's vector table has no entry for it).
#define UART0_CTRL (*(volatile uint32_t *)0x40004008)
#define UART0_INTSTATUS (*(volatile uint32_t *)0x4000400c)
#define UART_CTRL_RX_INT (1 << 3)
#define UART_INT_RX (1 << 1)
#define NVIC_ISER0 (*(volatile uint32_t *)0xe000e100)
#define NVIC_ICER0 (*(volatile uint32_t *)0xe000e180)
#define NVIC_ICPR0 (*(volatile uint32_t *)0xe000e280)
#define UART0_RX_IRQ (1 << 0)

static uint8_t rx_ring[512];
static volatile uint16_t rx_head, rx_tail;

void board_init(void) {
    UART0_CTRL |= UART_CTRL_RX_INT;
}

void board_pump(void) {
    // Move what the UART received into the ring; the interrupt character, while Python runs
    // with it armed, becomes a KeyboardInterrupt instead (tinymcp disarms it while serving).
    for (;;) {
        uint16_t next = (rx_head + 1) % sizeof(rx_ring);
        if (next == rx_tail) {
            return;   // full: the rest waits in the UART, and QEMU holds it back
        }
        int c = uart_rx_chr();
        if (c < 0) {
            return;
        }
        if (c == mp_interrupt_char) {
            mp_sched_keyboard_interrupt();
            continue;
        }
        rx_ring[rx_head] = c;
        rx_head = next;
    }
}

void board_wait(void) {
    // Sleep until a byte arrives or the SysTick (1 ms) fires; then take in what came.
    __asm volatile ("cpsid i");
    if (rx_head == rx_tail && !uart_rx_any()) {
        NVIC_ISER0 = UART0_RX_IRQ;
        __asm volatile ("wfi");
        NVIC_ICER0 = UART0_RX_IRQ;
    }
    UART0_INTSTATUS = UART_INT_RX;
    NVIC_ICPR0 = UART0_RX_IRQ;
    __asm volatile ("cpsie i");
    board_pump();
}

uintptr_t mp_hal_stdio_poll(uintptr_t poll_flags) {
    board_pump();
    if ((poll_flags & MP_STREAM_POLL_RD) && rx_head != rx_tail) {
        return MP_STREAM_POLL_RD;
    }
    return poll_flags & MP_STREAM_POLL_WR;
}

int mp_hal_stdin_rx_chr(void) {
    for (;;) {
        board_pump();
        if (rx_head != rx_tail) {
            int c = rx_ring[rx_tail];
            rx_tail = (rx_tail + 1) % sizeof(rx_ring);
            return c;
        }
        mp_event_wait_indefinite();
    }
}

mp_uint_t mp_hal_stdout_tx_strn(const char *str, size_t len) {
    uart_tx_strn(str, len);
    return len;
}

mp_uint_t mp_hal_ticks_ms(void) {
    return ticks_ms();
}

mp_uint_t mp_hal_ticks_us(void) {
    return ticks_us();
}

mp_uint_t mp_hal_ticks_cpu(void) {
    return 0;
}

void mp_hal_delay_ms(mp_uint_t ms) {
    mp_uint_t start = mp_hal_ticks_ms();
    do {
        mp_event_wait_ms(1);   // pending events (a KeyboardInterrupt) first, then board_wait()
    } while (mp_hal_ticks_ms() - start < ms);
}

void mp_hal_delay_us(mp_uint_t us) {
    mp_uint_t start = mp_hal_ticks_us();
    while (mp_hal_ticks_us() - start < us) {
    }
}

// littlefs stamps files with this. No RTC: time counts from power-on, as on a board whose clock
// was never set.
uint64_t mp_hal_time_ns(void) {
    return (uint64_t)mp_hal_ticks_ms() * 1000000;
}

// Not random: os.urandom and random's seed on a board without a generator.
static uint32_t random_state = 1;
void mp_hal_get_random(size_t n, uint8_t *buf) {
    for (size_t i = 0; i < n; ++i) {
        random_state = random_state * 1664525 + 1013904223;
        buf[i] = random_state >> 24;
    }
}
