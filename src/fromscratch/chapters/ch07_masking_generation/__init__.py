"""Chapter 07, masking generation: what belongs to this chapter alone."""
