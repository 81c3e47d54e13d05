"""Who may call: API keys (configured and stored), roles, the admin key routes, and the
per-key rate limit and per-tenant quota."""
