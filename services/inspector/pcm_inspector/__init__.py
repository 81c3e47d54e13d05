"""PCM's memory inspector: a browser UI served at `/ui` (static files that call the HTTP
API with the user's key) and the read-only routes it needs (`pcm_inspector.api`)."""
