"""The "Heads at work" page's parts: cached core calls, URL state, computed questions and the views."""
