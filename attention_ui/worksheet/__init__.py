"""The worksheet page's own code: the PDF builder, its font lookup and the page's view."""
