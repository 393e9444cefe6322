"""ClarQ tooling: the provider audit and the judge-cache converter (the rules live one folder
up)."""
