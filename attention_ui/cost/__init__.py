"""The cost page's own code: the efficient-attention and ring sections' views and the ring's figure builders."""
