"""The two key-file formats' first lines (DESIGN §4.3): constants only, so that the file
writer can refuse to overwrite a private key without importing the key code."""

KEY_FILE_HEADER = "logbook-ed25519-private-key-v1"
PUBLIC_FILE_HEADER = "logbook-ed25519-public-key-v1"

# a key file is two short lines, a public-key file four: anything this large was named by mistake
KEY_FILE_LIMIT = 64 * 1024
