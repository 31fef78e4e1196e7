"""The code check page's pieces: when the check may run (gate), the code box's presets, the report."""
