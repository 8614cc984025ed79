"""Chapter 14, modern decoders: what belongs to this chapter alone."""
