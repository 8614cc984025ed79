"""Chapter 18: inside a trained transformer (induction heads, patching, the logit lens, superposition)."""
