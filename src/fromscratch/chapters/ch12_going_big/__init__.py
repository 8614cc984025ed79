"""Chapter 12, going big: what belongs to this chapter alone."""
