"""Text-overlap building blocks: tokenisers, ROUGE and BLEU statistics (usable by any suite)."""
