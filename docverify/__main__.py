from docverify.cli import main

main()
