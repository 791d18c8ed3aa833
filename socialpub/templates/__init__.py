"""Content templates: `{{variable}}` placeholders, collections and hashtag sets."""
