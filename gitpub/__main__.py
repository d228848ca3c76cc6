from gitpub.cli.entry import main

main()
