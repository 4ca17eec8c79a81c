def s = DFNF ;
  try(reorder([2, 1, 3])) ;;
  try(vectorize(2) @ innermost(appliedMap)) ;;
  try(split(3) @ innermost(appliedMap)) ;;
  lowerToC
