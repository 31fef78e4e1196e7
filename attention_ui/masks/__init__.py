"""The masks page's figure builders."""
