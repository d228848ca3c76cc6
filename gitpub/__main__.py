from gitpub.cli import main

main()
