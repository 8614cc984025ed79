"""Chapter 10, modern transformers: what belongs to this chapter alone."""
