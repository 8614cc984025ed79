"""Chapter 09, encoder decoder: what belongs to this chapter alone."""
