"""The multi-head page's figure builders."""
