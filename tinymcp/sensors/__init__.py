# Sensor and actuator drivers: device-safe, one per module, attached to a server by one call.
