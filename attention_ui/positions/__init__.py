"""The positions page's figure builders."""
