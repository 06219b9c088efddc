"""The static documentation site: ``build_site`` gathers the knowledge base, plans which
pages changed, renders them, indexes them for search and writes the tree in one swap."""
