"""The decoder page's helpers: cached model calls (:mod:`.cached`) and its URL state (:mod:`.url`)."""
