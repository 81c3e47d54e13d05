"""A tenant's data as a whole: listing filters, the export format, deleting a memory and
what follows it (forgetting), and erasing everything of a user, workspace or project."""
