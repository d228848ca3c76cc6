"""Hand edits: changes in the blog that belong to no job, found in git itself and delivered
through the outbox (`edits`, `editgit`), and the hooks that hint at them (`hooks`)."""
