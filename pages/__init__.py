"""Dashboard pages (thin: widgets -> core -> render). Modules starting with '_' are shared helpers."""
