"""The guided path page's own code: the route and its URL format (pure), and its drawing."""
