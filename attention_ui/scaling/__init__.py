"""The why-√d_k page's figure builders."""
