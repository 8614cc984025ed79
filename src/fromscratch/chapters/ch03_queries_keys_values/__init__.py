"""Chapter 03, queries keys values: what belongs to this chapter alone."""
