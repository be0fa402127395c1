"""Run folders and what describes a run: its record, its integrity, its data summary, runs side by side."""
