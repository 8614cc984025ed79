"""Chapter 17, teaching a model to reason (RL from verifiable rewards): what belongs to this chapter alone."""
