"""Chapter 01, dot products: what belongs to this chapter alone."""
