"""What people read: table and figure specs, tables in four formats, figures, labels."""
