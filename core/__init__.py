"""recall: long-term memory recalled inside generation."""
