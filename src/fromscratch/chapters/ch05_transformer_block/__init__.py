"""Chapter 05, transformer block: what belongs to this chapter alone."""
