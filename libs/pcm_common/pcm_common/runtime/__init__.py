"""How a PCM process runs: settings and profiles, the adapters built from them, the service
plug-in and HTTP pieces every service shares, request ids, logs and metrics, loop heartbeats,
foreground yielding and garbage-collector tuning."""
