"""Chapter 06, imdb classifier: what belongs to this chapter alone."""
