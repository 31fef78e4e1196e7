"""The quiz page's UI: its table of settings (the questions themselves are attention_ui/quiz_bank.py)."""
