"""Chapter 04, multi head attention: what belongs to this chapter alone."""
