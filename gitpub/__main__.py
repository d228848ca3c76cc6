from gitpub.entry import main

main()
