# The dashboard shows what the bridge withholds from hosts (pins, issue 26): a board's change
# since the user accepted it, with the command that accepts it, as text like every board field.
from tests.bridge.conftest import clean_env
from tests.bridge.test_dashboard_chromium import browser, page_problems, text  # noqa: F401
from tests.windows_shim import as_on_windows  # noqa: F401  (each test twice: POSIX, Windows)

MARKUP = ' <img id="injected" src="x" onerror="document.body.dataset.owned=1">'


def test_the_dashboard_shows_a_pending_change_as_text(http_bridge, browser, tmp_path):  # noqa: F811
    # The rug-pull board changes set_led right after the bridge first listed it.
    env = clean_env(RUGPULL_AFTER="1", RUGPULL_EXTRA=MARKUP,
                    TINYMCP_PINS=str(tmp_path / "pins.json"))
    url, bridge = http_bridge(env=env, board="tests/hostile/rugpull_board.py")
    bridge.wait_stderr(r"tool set_led changed since it was accepted")
    page = browser()
    page.navigate(url.rsplit("/", 1)[0] + "/")
    page.wait_for("document.querySelector('section.board .pending li') !== null")
    shown = text(page, "section.board .pending")
    assert "Withheld from hosts" in shown, shown
    assert "tools set_led changed (" in shown and "description" in shown, shown
    assert "tinymcp-bridge --trust rugpull-board-py" in shown, shown
    assert "API keys" in shown and 'id=\\"injected\\"' in shown, shown   # the diff, as text
    assert page.evaluate("document.getElementById('injected')") is None
    assert page.evaluate("document.body.dataset.owned || ''") == ""
    assert page_problems(page) == []
