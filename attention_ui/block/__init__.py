"""The block page's figure builders."""
