"""Chapter 15, assistant: what belongs to this chapter alone."""
