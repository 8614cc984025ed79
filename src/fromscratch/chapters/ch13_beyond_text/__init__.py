"""Chapter 13, beyond text: what belongs to this chapter alone."""
