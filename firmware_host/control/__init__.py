"""The control socket: the server, its wire protocol and the client tablectl uses."""
