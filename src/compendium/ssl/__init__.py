"""Self-supervised learning: losses (pure functions), heads, methods."""
