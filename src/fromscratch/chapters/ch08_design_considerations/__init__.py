"""Chapter 08, design considerations: what belongs to this chapter alone."""
