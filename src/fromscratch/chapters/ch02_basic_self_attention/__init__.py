"""Chapter 02, basic self attention: what belongs to this chapter alone."""
