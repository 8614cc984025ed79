"""Chapter 11, longer contexts: what belongs to this chapter alone."""
