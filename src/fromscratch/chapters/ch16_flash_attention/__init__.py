"""Chapter 16, attention at the speed of memory: what belongs to this chapter alone."""
