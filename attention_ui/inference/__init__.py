"""The inference page's own code: the cache-size calculator's section and the page's figure builders."""
