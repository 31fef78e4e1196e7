"""The look-alikes page's own code: its figure builders and the state-space section (view and figures)."""
